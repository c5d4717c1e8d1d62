import type ivm from "isolated-vm";
import { expectTypeOf, it } from "vitest";
import type { IsolateContext, IsolateHandle, IsolateReference, IsolateScript } from "./isolate-factory.js";

it("the real isolated-vm 5.x classes satisfy the structural contract", () => {
  expectTypeOf<ivm.Isolate>().toExtend<IsolateHandle>();
  expectTypeOf<ivm.Context>().toExtend<IsolateContext>();
  expectTypeOf<ivm.Script>().toExtend<IsolateScript>();
  expectTypeOf<ivm.Reference>().toExtend<IsolateReference>();
});
