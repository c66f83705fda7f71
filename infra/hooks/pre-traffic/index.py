"""order-timeout's pre-traffic hook: CodeDeploy calls it before a function's live alias sends the new version
any traffic (template.yaml, PreTrafficHook).

It learns the deployment group from GetDeployment, invokes the version that group deploys with the function's
SAMPLES, checks each answer and reports Succeeded or Failed to CodeDeploy; any failure, an unexpected answer
or an exception, reports Failed, and the alias keeps the old version. test_index.py beside it runs it against
stubbed clients (`python3 -m unittest discover -s infra/hooks/pre-traffic`).
"""

import json
import os
import time

import boto3
from botocore.config import Config

# A scheduled function answers after its whole pass (up to 300 s): the SDK's 60 s read timeout
# would cut the call and its retry would start a second pass. So: no SDK retries, and a read
# timeout above the longest function timeout.
LAMBDA = boto3.client(
    "lambda", config=Config(read_timeout=840, connect_timeout=10, retries={"total_max_attempts": 1})
)
CODEDEPLOY = boto3.client("codedeploy")
# A throttled invoke is retried while this much time is left: the longest function timeout + 30 s.
RESERVE_MS = 330_000

# Per function (its module under functions/): the sample events and the answers they must get.
SAMPLES = json.loads(r"""
{
 "order-created": [
  {"name": "get-unknown-order", "event": {"version": "2.0", "routeKey": "GET /orders/{id}", "rawPath": "/orders/otc-pretraffic-probe", "rawQueryString": "", "headers": {"accept": "application/json"}, "requestContext": {"http": {"method": "GET", "path": "/orders/otc-pretraffic-probe"}, "routeKey": "GET /orders/{id}", "stage": "$default", "authorizer": {"iam": {"userArn": "PROBE_PRINCIPAL"}}}, "isBase64Encoded": false, "pathParameters": {"id": "otc-pretraffic-probe"}}, "expect": {"statusCode": 404, "code": "NOT_FOUND"}},
  {"name": "place-without-fields", "event": {"version": "2.0", "routeKey": "POST /orders", "rawPath": "/orders", "rawQueryString": "", "headers": {"content-type": "application/json"}, "requestContext": {"http": {"method": "POST", "path": "/orders"}, "routeKey": "POST /orders", "stage": "$default", "authorizer": {"iam": {"userArn": "PROBE_PRINCIPAL"}}}, "isBase64Encoded": false, "body": "{}"}, "expect": {"statusCode": 400, "code": "MISSING_FIELD"}}
 ],
 "payment-notify": [
  {"name": "stale-notification", "event": {"version": "2.0", "routeKey": "POST /wechatpay/notify", "rawPath": "/wechatpay/notify", "rawQueryString": "", "headers": {"content-type": "application/json", "wechatpay-nonce": "fdasflkja484w", "wechatpay-serial": "PUB_KEY_ID_0114232134912410000000000000", "wechatpay-signature": "WBJaWlVFur5OGQ/E0ZKIlSDhR8WTNrkW2oCECNKyTWRcwHZ8ypOoVSi3CDD2x3WyvBpH3gvfWJDsZZXtuU3JqGqazx6KpwHsEFcJHwf2uEtJZzB1x6sL/nfQe0ckhLBnJ4GcmT9VLnzqFTBhIjv8ld8uGhNVaQvDlb4ZnPCIMq3sk7jHmTEUXCy3QC/IjzkBEGFNWk2PbaMyPsPH6HWsq6pHkd9ZP9CgEiUgbENhsiW7WMgbJv4AVZ9RcqrLPc6qfd9uxPhr3e6jdq/U3hIZJZUvTD4kGuPY3O3c/YzFoNvvbzPmOaYr1qMvSNgthQQbRANKfxJzZfu/+Stgw2gA==", "wechatpay-signature-type": "WECHATPAY2-SHA256-RSA2048", "wechatpay-timestamp": "1795914960"}, "requestContext": {"http": {"method": "POST", "path": "/wechatpay/notify"}, "routeKey": "POST /wechatpay/notify", "stage": "$default"}, "isBase64Encoded": false, "body": "{\"id\":\"EV-2018022511223320873\",\"create_time\":\"2026-11-30T09:16:00+08:00\",\"resource_type\":\"encrypt-resource\",\"event_type\":\"TRANSACTION.SUCCESS\",\"summary\":\"\u652f\u4ed8\u6210\u529f\",\"resource\":{\"original_type\":\"transaction\",\"algorithm\":\"AEAD_AES_256_GCM\",\"ciphertext\":\"sJ2CknVjK5hGwTkYHx0VaBXuvN8pO1ZkZ5DtLJ4cZ9L0uSjx3B8pO9wQfZJ6Kk7lQ4c9aR1v2X3s8JfT5nH+qE0bY7wZ1mPq4cV6xK3dL9aN2uG8tR5fW0jS7hB1eC4iM3oU6yA9gD2kF5lH8nJ0pQ3rT6vX9zB2cE5fG8hI1jK4lM7nO0pQ==\",\"associated_data\":\"transaction\",\"nonce\":\"fdasflkja484\"}}"}, "expect": {"statusCode": 401, "code": "FAIL"}}
 ],
 "timeout-sweep": [
  {"name": "schedule", "event": {"source": "order-timeout.scheduler", "schedule": "timeout-sweep", "scheduledTime": "2026-11-30T01:15:00Z"}, "expect": {"zero": ["failedBatches"]}}
 ],
 "stream-consumer": [
  {"name": "schedule", "event": {"source": "order-timeout.scheduler", "schedule": "stream-consumer"}, "expect": {"zero": ["errors"]}}
 ],
 "compensation": [
  {"name": "schedule", "event": {"source": "order-timeout.scheduler", "schedule": "compensation"}, "expect": {"empty": ["failures"]}}
 ],
 "admin": [
  {"name": "story-of-unknown-order", "event": {"version": "2.0", "routeKey": "GET /admin/orders/{id}", "rawPath": "/admin/orders/otc-pretraffic-probe", "rawQueryString": "tenantId=otc-probe", "queryStringParameters": {"tenantId": "otc-probe"}, "headers": {"accept": "application/json"}, "requestContext": {"http": {"method": "GET", "path": "/admin/orders/otc-pretraffic-probe"}, "routeKey": "GET /admin/orders/{id}", "stage": "$default", "authorizer": {"iam": {"userArn": "PROBE_PRINCIPAL"}}}, "isBase64Encoded": false, "pathParameters": {"id": "otc-pretraffic-probe"}}, "expect": {"statusCode": 404, "code": "NOT_FOUND"}},
  {"name": "force-close-without-reason", "event": {"version": "2.0", "routeKey": "POST /admin/orders/{id}/force-close", "rawPath": "/admin/orders/otc-pretraffic-probe/force-close", "rawQueryString": "tenantId=otc-probe", "queryStringParameters": {"tenantId": "otc-probe"}, "headers": {"content-type": "application/json"}, "requestContext": {"http": {"method": "POST", "path": "/admin/orders/otc-pretraffic-probe/force-close"}, "routeKey": "POST /admin/orders/{id}/force-close", "stage": "$default", "authorizer": {"iam": {"userArn": "PROBE_PRINCIPAL"}}}, "isBase64Encoded": false, "pathParameters": {"id": "otc-pretraffic-probe"}, "body": "{}"}, "expect": {"statusCode": 400, "code": "MISSING_REASON"}}
 ]
}
""")


def handler(event, context):
    deployment, execution = event["DeploymentId"], event["LifecycleEventHookExecutionId"]
    status, report = "Failed", {"deploymentId": deployment}
    try:
        info = CODEDEPLOY.get_deployment(deploymentId=deployment)["deploymentInfo"]
        report["group"] = info["deploymentGroupName"]
        kind, version = target(report["group"])
        report["version"] = version
        report["checks"] = [check(kind, version, sample, context) for sample in SAMPLES[kind]]
        status = "Succeeded"
    except Exception as e:  # any failure fails the deployment: the alias keeps the old version
        report["error"] = repr(e)
    report["status"] = status
    print(json.dumps(report))
    CODEDEPLOY.put_lifecycle_event_hook_execution_status(
        deploymentId=deployment, lifecycleEventHookExecutionId=execution, status=status
    )
    return status


def target(group):
    for kind in SAMPLES:
        prefix = kind.upper().replace("-", "_")
        if os.environ[prefix + "_GROUP"] == group:
            return kind, os.environ[prefix + "_VERSION"]
    raise LookupError("deployment group %s deploys none of this stack's functions" % group)


def invoke(version, event, context):
    while True:
        try:
            return LAMBDA.invoke(FunctionName=version, Payload=json.dumps(event).encode())
        except LAMBDA.exceptions.TooManyRequestsException:
            # reserved concurrency busy with a scheduled run (compensation has 1): wait for it
            if context.get_remaining_time_in_millis() < RESERVE_MS:
                raise
            time.sleep(15)


def with_caller(event):
    """The sample as sent: an IAM caller of "PROBE_PRINCIPAL" becomes this hook's role."""
    iam = event.get("requestContext", {}).get("authorizer", {}).get("iam")
    if iam is None or iam.get("userArn") != "PROBE_PRINCIPAL":
        return event
    event = json.loads(json.dumps(event))
    event["requestContext"]["authorizer"]["iam"]["userArn"] = os.environ["PROBE_PRINCIPAL"]
    return event


def check(kind, version, sample, context):
    response = invoke(version, with_caller(sample["event"]), context)
    payload = json.loads(response["Payload"].read() or b"null")
    if "FunctionError" in response:
        raise AssertionError("%s %s failed: %s" % (kind, sample["name"], payload))
    expect = sample["expect"]
    if "statusCode" in expect:
        body = json.loads(payload.get("body") or "{}")
        code = body.get("code") or body.get("error", {}).get("code")
        seen = {"statusCode": payload["statusCode"], "code": code}
        passed = seen["statusCode"] == expect["statusCode"] and code == expect["code"]
    else:
        answer = json.loads(payload)  # the handler's stats, answered as a JSON string
        seen = {field: answer[field] for field in expect.get("zero", []) + expect.get("empty", [])}
        passed = all(answer[f] == 0 for f in expect.get("zero", [])) and all(
            answer[f] == [] for f in expect.get("empty", [])
        )
    if not passed:
        raise AssertionError("%s %s: expected %s, got %s" % (kind, sample["name"], expect, seen))
    return dict(sample=sample["name"], **seen)
