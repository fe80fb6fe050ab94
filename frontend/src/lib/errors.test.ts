import { describe, expect, it } from "vitest";
import { fieldOf, mapErrors, parsePath, submitFailure } from "./errors";

const TEMPLATE_FIELDS = ["name", "memory", "ai_core", "ai_cpu"];

describe("error-to-field mapping", () => {
  it("puts a plain field error on its field (the API's 400 body)", () => {
    const body = {
      code: "invalid",
      message: "memory: Ascend310P template vir02: memory must be greater than 0",
      errors: { memory: ["Ascend310P template vir02: memory must be greater than 0"] },
    };
    expect(mapErrors(body, TEMPLATE_FIELDS)).toEqual({
      fields: { memory: ["Ascend310P template vir02: memory must be greater than 0"] },
      form: [],
    });
  });

  it("understands nested and device-config paths and YAML names", () => {
    expect(parsePath("vnpus[1].templates[0].memory")).toEqual(["vnpus", 1, "templates", 0, "memory"]);
    expect(fieldOf("vnpus[1].templates[0].memory")).toBe("memory");
    expect(fieldOf("vnpus[0].memoryAllocatable")).toBe("memory_allocatable");
    expect(fieldOf("templates[2].aiCore")).toBe("ai_core");
    const body = { errors: { "vnpus[0].aiCPU": ["must be at least 0"], "templates[0].name": ["duplicate"] } };
    expect(mapErrors(body, TEMPLATE_FIELDS).fields).toEqual({ ai_cpu: ["must be at least 0"], name: ["duplicate"] });
  });

  it("keeps messages of fields the form does not show, and non-field errors, for the form", () => {
    const body = { errors: { non_field_errors: ["config is empty"], chip_name: ["unknown chip"], memory: "one string" } };
    const mapped = mapErrors(body, TEMPLATE_FIELDS);
    expect(mapped.fields).toEqual({ memory: ["one string"] });
    expect(mapped.form).toEqual(["config is empty", "chip_name: unknown chip"]);
  });

  it("falls back to the message when there is no `errors`", () => {
    expect(mapErrors({ code: "no_change", message: "nothing to publish" }, TEMPLATE_FIELDS)).toEqual({
      fields: {},
      form: ["nothing to publish"],
    });
    expect(mapErrors(undefined, TEMPLATE_FIELDS)).toEqual({ fields: {}, form: [] });
  });
});

describe("submitFailure", () => {
  it("puts field messages on fields and the rest in one form text", () => {
    const error = { message: "Invalid.", body: { code: "invalid", message: "Invalid.", errors: { name: ["taken"], other: ["odd"] } } };
    expect(submitFailure(error, ["name"])).toEqual({ fields: { name: ["taken"] }, form: "other: odd" });
    const onlyFields = { message: "Invalid.", body: { code: "invalid", message: "Invalid.", errors: { name: ["taken"] } } };
    expect(submitFailure(onlyFields, ["name"]).form).toBeNull();
  });
  it("makes an error without a body all form text", () => {
    expect(submitFailure(new Error("network down"), ["name"])).toEqual({ fields: {}, form: "network down" });
  });
});
