"""Prints template.yaml as CloudFormation JSON, the way the SAM transform turns it on deploy.

Usage: python3 sam_translate.py <template.yaml> [Name=value ...] (template parameter values, as
`sam deploy --parameter-overrides` passes them). Needs the aws-sam-translator package (cfn-lint brings it);
no AWS call: local CodeUris become S3 locations as `sam package` would make them, and the managed policy
ARNs SAM looks up are given.
"""

import json
import os
import sys

from samtranslator.public.exceptions import InvalidDocumentException
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

MANAGED_POLICIES = {
    name: "arn:aws:iam::aws:policy/service-role/" + name
    for name in (
        "AWSLambdaBasicExecutionRole",
        "AWSLambdaVPCAccessExecutionRole",
        "AWSCodeDeployRoleForLambda",
    )
}


class ManagedPolicies:
    def load(self):
        return MANAGED_POLICIES


def main(path, overrides=()):
    # The translator resolves AWS::Region for partition lookups; any region translates the same.
    os.environ.setdefault("AWS_DEFAULT_REGION", "ap-southeast-1")
    template = yaml_parse(open(path, encoding="utf-8").read())
    for resource in template.get("Resources", {}).values():
        props = resource.get("Properties", {})
        uri = props.get("CodeUri")
        if resource.get("Type") == "AWS::Serverless::Function" and isinstance(uri, str):
            props["CodeUri"] = "s3://artifacts/" + uri.strip("./").replace("/", "-") + ".zip"
    try:
        parameters = dict(o.split("=", 1) for o in overrides)
        translated = transform(template, parameters, ManagedPolicies())
    except InvalidDocumentException as e:
        sys.stderr.write("\n".join(cause.message for cause in e.causes) + "\n")
        return 1
    json.dump(translated, sys.stdout, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
