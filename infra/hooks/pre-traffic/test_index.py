"""The pre-traffic hook (index.py) against stubbed CodeDeploy and Lambda clients (botocore Stubber).

Each test gives GetDeployment a deployment group, the function's answers to the samples, and checks what the
hook reports to CodeDeploy (PutLifecycleEventHookExecutionStatus: Succeeded or Failed), what it returns, the
events it sent, and the report it logs. Run from the repository root:
`python3 -m unittest discover -s infra/hooks/pre-traffic -v` (PreTrafficHookTest runs it in the Maven build).
"""

import contextlib
import copy
import io
import json
import os
import unittest
from unittest import mock

# boto3 needs a region to make the clients at import; the stubs answer before any credential is used
os.environ.setdefault("AWS_DEFAULT_REGION", "ap-southeast-1")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")

from botocore.response import StreamingBody  # noqa: E402
from botocore.stub import Stubber  # noqa: E402

import index  # noqa: E402

ROLE = "arn:aws:iam::123456789012:role/otc-PreTrafficHookRole-TEST"
MODULES = ["order-created", "payment-notify", "timeout-sweep", "stream-consumer", "compensation", "admin"]
DEPLOYMENT, EXECUTION = "d-TEST", "e-TEST"


def group(module):
    return "otc-%s-DeploymentGroup-TEST" % module


def version(module):
    return "arn:aws:lambda:ap-southeast-1:123456789012:function:otc-%s:7" % module


def http(status, code, nested=False):
    """An API handler's answer as Lambda returns it."""
    body = {"error": {"code": code, "message": "m"}} if nested else {"code": code, "message": "m"}
    return {"statusCode": status, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}


def stats(**fields):
    """A scheduled handler's answer: its stats as a JSON string."""
    return json.dumps(fields)


HEALTHY = {
    "order-created": [http(404, "NOT_FOUND"), http(400, "MISSING_FIELD")],
    "payment-notify": [http(401, "FAIL")],
    "timeout-sweep": [stats(closed=3, failedBatches=0)],
    "stream-consumer": [stats(consumed=2, errors=0)],
    "compensation": [stats(repairs=0, failures=[], skipped=[])],
    "admin": [http(404, "NOT_FOUND", nested=True), http(400, "MISSING_REASON", nested=True)],
}


class Context:
    def __init__(self, remaining_ms=900_000):
        self.remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self):
        return self.remaining_ms


def payload(answer):
    raw = json.dumps(answer).encode()
    return StreamingBody(io.BytesIO(raw), len(raw))


def as_sent(event):
    """The sample as the hook must send it: an IAM caller of "PROBE_PRINCIPAL" is the hook's role."""
    event = copy.deepcopy(event)
    iam = event.get("requestContext", {}).get("authorizer", {}).get("iam")
    if iam is not None and iam.get("userArn") == "PROBE_PRINCIPAL":
        iam["userArn"] = ROLE
    return json.dumps(event).encode()


class PreTrafficHookTest(unittest.TestCase):
    def setUp(self):
        env = {"PROBE_PRINCIPAL": ROLE}
        for module in MODULES:
            prefix = module.upper().replace("-", "_")
            env[prefix + "_GROUP"] = group(module)
            env[prefix + "_VERSION"] = version(module)
        patcher = mock.patch.dict(os.environ, env)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.lam = Stubber(index.LAMBDA)
        self.codedeploy = Stubber(index.CODEDEPLOY)
        self.lam.activate()
        self.codedeploy.activate()
        self.addCleanup(self.lam.deactivate)
        self.addCleanup(self.codedeploy.deactivate)
        sleep = mock.patch.object(index.time, "sleep")
        self.sleeps = sleep.start()
        self.addCleanup(sleep.stop)

    def deployment_of(self, group_name):
        self.codedeploy.add_response(
            "get_deployment",
            {"deploymentInfo": {"deploymentGroupName": group_name}},
            {"deploymentId": DEPLOYMENT},
        )

    def answers(self, module, answers, function_error=None):
        for sample, answer in zip(index.SAMPLES[module], answers):
            response = {"StatusCode": 200, "Payload": payload(answer)}
            if function_error:
                response["FunctionError"] = function_error
            self.lam.add_response(
                "invoke", response, {"FunctionName": version(module), "Payload": as_sent(sample["event"])}
            )

    def expect_status(self, status):
        self.codedeploy.add_response(
            "put_lifecycle_event_hook_execution_status",
            {"lifecycleEventHookExecutionId": EXECUTION},
            {"deploymentId": DEPLOYMENT, "lifecycleEventHookExecutionId": EXECUTION, "status": status},
        )

    def run_hook(self, context=None):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            returned = index.handler(
                {"DeploymentId": DEPLOYMENT, "LifecycleEventHookExecutionId": EXECUTION}, context or Context()
            )
        self.lam.assert_no_pending_responses()
        self.codedeploy.assert_no_pending_responses()
        return returned, json.loads(out.getvalue())

    def test_every_function_has_samples(self):
        self.assertEqual(sorted(index.SAMPLES), sorted(MODULES))
        for module in MODULES:
            self.assertEqual(len(index.SAMPLES[module]), len(HEALTHY[module]), module)

    def test_a_healthy_version_of_each_function_succeeds_after_every_sample(self):
        for module in MODULES:
            with self.subTest(module=module):
                self.deployment_of(group(module))
                self.answers(module, HEALTHY[module])
                self.expect_status("Succeeded")
                returned, report = self.run_hook()
                self.assertEqual(returned, "Succeeded")
                self.assertEqual(report["status"], "Succeeded")
                self.assertEqual(report["group"], group(module))
                self.assertEqual(report["version"], version(module))
                self.assertEqual([c["sample"] for c in report["checks"]], [s["name"] for s in index.SAMPLES[module]])
                self.assertNotIn("error", report)

    def test_the_api_checks_report_the_status_and_code_seen(self):
        self.deployment_of(group("order-created"))
        self.answers("order-created", HEALTHY["order-created"])
        self.expect_status("Succeeded")
        _, report = self.run_hook()
        self.assertEqual(
            report["checks"],
            [
                {"sample": "get-unknown-order", "statusCode": 404, "code": "NOT_FOUND"},
                {"sample": "place-without-fields", "statusCode": 400, "code": "MISSING_FIELD"},
            ],
        )

    def test_the_probe_caller_becomes_the_hooks_role_and_other_events_go_unchanged(self):
        sample = index.SAMPLES["order-created"][0]["event"]
        sent = index.with_caller(sample)
        self.assertEqual(sent["requestContext"]["authorizer"]["iam"]["userArn"], ROLE)
        self.assertEqual(sample["requestContext"]["authorizer"]["iam"]["userArn"], "PROBE_PRINCIPAL")
        notify = index.SAMPLES["payment-notify"][0]["event"]
        self.assertIs(index.with_caller(notify), notify)

    def test_a_wrong_status_fails_the_deployment_and_stops_at_that_sample(self):
        self.deployment_of(group("order-created"))
        # a function that refuses the probe's caller (OTC_PROBE_PRINCIPAL unset): the first sample fails
        self.answers("order-created", [http(403, "FORBIDDEN")])
        self.expect_status("Failed")
        returned, report = self.run_hook()
        self.assertEqual(returned, "Failed")
        self.assertEqual(report["status"], "Failed")
        self.assertNotIn("checks", report)
        self.assertIn("get-unknown-order", report["error"])
        self.assertIn("403", report["error"])

    def test_a_right_status_with_a_wrong_code_fails(self):
        self.deployment_of(group("admin"))
        self.answers("admin", [http(404, "NOT_FOUND", nested=True), http(400, "MISSING_FIELD", nested=True)])
        self.expect_status("Failed")
        returned, report = self.run_hook()
        self.assertEqual(returned, "Failed")
        self.assertIn("force-close-without-reason", report["error"])

    def test_a_function_error_fails_whatever_the_payload(self):
        self.deployment_of(group("payment-notify"))
        self.answers("payment-notify", [{"errorMessage": "init failed"}], function_error="Unhandled")
        self.expect_status("Failed")
        returned, report = self.run_hook()
        self.assertEqual(returned, "Failed")
        self.assertIn("init failed", report["error"])

    def test_a_scheduled_pass_with_failures_fails(self):
        for module, answer in [
            ("timeout-sweep", stats(closed=3, failedBatches=1)),
            ("stream-consumer", stats(consumed=2, errors=2)),
            ("compensation", stats(repairs=0, failures=["overdue"], skipped=[])),
        ]:
            with self.subTest(module=module):
                self.deployment_of(group(module))
                self.answers(module, [answer])
                self.expect_status("Failed")
                returned, report = self.run_hook()
                self.assertEqual(returned, "Failed")
                self.assertIn("expected", report["error"])

    def test_a_scheduled_pass_reports_the_fields_it_checked(self):
        self.deployment_of(group("compensation"))
        self.answers("compensation", HEALTHY["compensation"])
        self.expect_status("Succeeded")
        _, report = self.run_hook()
        self.assertEqual(report["checks"], [{"sample": "schedule", "failures": []}])

    def test_a_group_of_another_stack_fails_without_invoking_anything(self):
        self.deployment_of("some-other-stack-DeploymentGroup")
        self.expect_status("Failed")
        returned, report = self.run_hook()
        self.assertEqual(returned, "Failed")
        self.assertIn("LookupError", report["error"])
        self.assertNotIn("version", report)

    def test_codedeploy_refusing_get_deployment_still_reports_failed(self):
        self.codedeploy.add_client_error("get_deployment", service_error_code="DeploymentDoesNotExistException")
        self.expect_status("Failed")
        returned, report = self.run_hook()
        self.assertEqual(returned, "Failed")
        self.assertIn("DeploymentDoesNotExistException", report["error"])

    def test_a_throttled_invoke_waits_for_the_reserved_environment_and_retries(self):
        self.deployment_of(group("compensation"))
        sample = index.SAMPLES["compensation"][0]["event"]
        self.lam.add_client_error(
            "invoke",
            service_error_code="TooManyRequestsException",
            http_status_code=429,
            expected_params={"FunctionName": version("compensation"), "Payload": as_sent(sample)},
        )
        self.answers("compensation", HEALTHY["compensation"])
        self.expect_status("Succeeded")
        returned, _ = self.run_hook()
        self.assertEqual(returned, "Succeeded")
        self.sleeps.assert_called_once_with(15)

    def test_a_throttled_invoke_with_too_little_time_left_fails(self):
        self.deployment_of(group("compensation"))
        self.lam.add_client_error("invoke", service_error_code="TooManyRequestsException", http_status_code=429)
        self.expect_status("Failed")
        returned, report = self.run_hook(Context(remaining_ms=index.RESERVE_MS - 1))
        self.assertEqual(returned, "Failed")
        self.assertIn("TooManyRequestsException", report["error"])
        self.sleeps.assert_not_called()


if __name__ == "__main__":
    unittest.main()
