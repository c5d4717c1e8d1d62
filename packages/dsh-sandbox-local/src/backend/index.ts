export type {
  BackendProbeResult,
  LocalBackend,
  LocalBackendName,
  LocalConfinePolicy,
} from "./local-backend.js";
