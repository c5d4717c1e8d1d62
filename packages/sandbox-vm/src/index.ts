export { VM_CAPABILITIES, VmEngine, type VmEngineOptions } from "./vm-engine/index.js";
