export {
  type AuditEntry,
  type AuditedResult,
  AuditLogger,
  type AuditLoggerOptions,
  type AuditSearch,
  type AuditStatistics,
  hashCode,
} from "./audit-logger.js";
