"""Runs template.yaml's pre-traffic hook (infra/hooks/pre-traffic/index.py) once per function deployment, offline.

Usage: python3 pretraffic_hook_driver.py <dir with index.py> <answers.json> <hook role ARN>

answers.json: {"<module>": [<what the function answered each of the hook's samples>, ...], ...}, in the
order of the hook's SAMPLES. The CodeDeploy and Lambda clients are botocore Stubbers: GetDeployment names
the module's deployment group, each Invoke returns the next answer (JSON-encoded, as Lambda returns a
handler's result), and PutLifecycleEventHookExecutionStatus must come last. The role ARN is the hook's
PROBE_PRINCIPAL variable (its own role, as CloudFormation passes it). Prints
{"<module>": {"status": "Succeeded" or "Failed", "invoked": [the events the hook sent]}}.
"""

import contextlib
import io
import json
import os
import sys

os.environ.setdefault("AWS_DEFAULT_REGION", "ap-southeast-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "driver")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "driver")


class Context:
    def get_remaining_time_in_millis(self):
        return 900_000


def run(index, module, answers):
    from botocore.response import StreamingBody
    from botocore.stub import ANY, Stubber

    prefix = module.upper().replace("-", "_")
    group, version = os.environ[prefix + "_GROUP"], os.environ[prefix + "_VERSION"]
    invoked = []
    real_invoke = index.LAMBDA.invoke

    def recording_invoke(**kwargs):
        invoked.append(json.loads(kwargs["Payload"]))
        return real_invoke(**kwargs)

    lam, codedeploy = Stubber(index.LAMBDA), Stubber(index.CODEDEPLOY)
    codedeploy.add_response(
        "get_deployment", {"deploymentInfo": {"deploymentGroupName": group}}, {"deploymentId": "d-DRIVER"}
    )
    for answer in answers:
        raw = json.dumps(answer).encode()
        lam.add_response(
            "invoke",
            {"StatusCode": 200, "Payload": StreamingBody(io.BytesIO(raw), len(raw))},
            {"FunctionName": version, "Payload": ANY},
        )
    statuses = []

    def record_status(**kwargs):
        statuses.append(kwargs["status"])
        return {"lifecycleEventHookExecutionId": kwargs["lifecycleEventHookExecutionId"]}

    index.LAMBDA.invoke = recording_invoke
    index.CODEDEPLOY.put_lifecycle_event_hook_execution_status = record_status
    try:
        # the hook prints its report: to stderr, so stdout stays this driver's JSON
        with lam, codedeploy, contextlib.redirect_stdout(sys.stderr):
            returned = index.handler(
                {"DeploymentId": "d-DRIVER", "LifecycleEventHookExecutionId": "e-DRIVER"}, Context()
            )
    finally:
        index.LAMBDA.invoke = real_invoke
    if statuses != [returned]:
        raise AssertionError("%s: reported %s but returned %s" % (module, statuses, returned))
    return {"status": returned, "invoked": invoked}


def main(hook_dir, answers_path, probe_principal):
    answers = json.load(open(answers_path, encoding="utf-8"))
    os.environ["PROBE_PRINCIPAL"] = probe_principal
    for module in answers:
        prefix = module.upper().replace("-", "_")
        os.environ[prefix + "_GROUP"] = "otc-%s-DeploymentGroup-DRIVER" % module
        os.environ[prefix + "_VERSION"] = "arn:aws:lambda:ap-southeast-1:123456789012:function:otc-%s:7" % module
    sys.path.insert(0, hook_dir)
    import index

    results = {module: run(index, module, module_answers) for module, module_answers in answers.items()}
    json.dump(results, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
