// Errors

// Fetch
export {
  type CheckedFetchOptions,
  type CheckedFetchResult,
  checkedFetch,
  type FetchFunction,
  redirectLocation,
} from "./checked-fetch/checked-fetch.js";
export {
  isPermissionError,
  PERMISSION_CODES,
  type PermissionCode,
  PermissionError,
} from "./error-codes/permission-codes.js";
export type { FetchRule, FetchScheme } from "./fetch-rules/fetch-pattern.js";
export { canonicalisePath } from "./fs-rules/canonicalise-path.js";
export type { FsAccess, FsRule } from "./fs-rules/fs-pattern.js";
// Telemetry
export { PERMISSION_DENIED_METRIC } from "./internal/telemetry.js";
// Checker
export {
  type DenialReason,
  type FetchAllowedDecision,
  type FetchDeniedDecision,
  type FetchPermissionDecision,
  type FetchPermissionRequest,
  type FsAllowedDecision,
  type FsDeniedDecision,
  type FsPermissionDecision,
  type FsPermissionRequest,
  PermissionChecker,
  type PermissionCheckerOptions,
  type PermissionDecision,
  type PermissionRequest,
  permissionDeniedError,
  type ToolAllowedDecision,
  type ToolDeniedDecision,
  type ToolPermissionDecision,
  type ToolPermissionRequest,
} from "./permission-checker/permission-checker.js";
// Policy
export {
  FsPermissionSchema,
  formatPolicyPath,
  type PermissionPolicyInput,
  PermissionPolicySchema,
  type ResolvedPermissionPolicy,
  resolvePermissionPolicy,
} from "./policy/permission-policy.js";
