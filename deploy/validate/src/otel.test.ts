import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { validateOtelConfig } from "./otel.ts";
import { repoPath } from "./paths.ts";

describe("validateOtelConfig", () => {
  it("accepts the committed collector config", () => {
    expect(validateOtelConfig(readFileSync(repoPath("deploy/otel-collector.yaml"), "utf8"))).toEqual([]);
  });

  it("names components a pipeline uses but nobody defined", () => {
    const broken = [
      "receivers: { otlp: { protocols: { http: {} } } }",
      "exporters: { debug: {} }",
      "service:",
      "  extensions: [health_check]",
      "  pipelines:",
      "    traces: { receivers: [otlp], processors: [batch], exporters: [otlp/jaeger] }",
      "    spans: { receivers: [otlp], exporters: [] }",
    ].join("\n");
    expect(validateOtelConfig(broken).map((p) => `${p.path}: ${p.message}`)).toEqual([
      '/service/pipelines/traces/processors: "batch" is not defined under processors',
      '/service/pipelines/traces/exporters: "otlp/jaeger" is not defined under exporters',
      "/service/pipelines/spans: a pipeline is named traces, metrics or logs[/name]",
      "/service/pipelines/spans/exporters: a pipeline needs at least one of its exporters",
      '/service/extensions: "health_check" is not defined under extensions',
    ]);
  });
});
