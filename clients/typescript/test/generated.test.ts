// The committed types are what `npm run generate` makes of docs/reference/openapi.yaml today: the
// generator runs again into a temporary file, and any difference fails with the command to run.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

test("src/generated/api.ts is the generator's output for docs/reference/openapi.yaml", () => {
  const dir = mkdtempSync(join(tmpdir(), "otc-client-"));
  try {
    const fresh = join(dir, "api.ts");
    execFileSync(
      process.execPath,
      [
        join("node_modules", "openapi-typescript", "bin", "cli.js"),
        join("..", "..", "docs", "reference", "openapi.yaml"),
        "-o",
        fresh,
      ],
      { stdio: "pipe" },
    );
    const committed = readFileSync(join("src", "generated", "api.ts"), "utf8");
    assert.ok(
      readFileSync(fresh, "utf8") === committed,
      "src/generated/api.ts differs from docs/reference/openapi.yaml's types: run `npm run generate` in clients/typescript and commit the result",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
