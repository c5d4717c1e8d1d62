export type {
  BackendProbeResult,
  DeniedRead,
  LocalBackend,
  LocalBackendName,
  LocalConfinePolicy,
} from "./local-backend.js";
