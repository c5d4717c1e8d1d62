export { type HostRunResult, type LocalHost, nodeLocalHost } from "./local-host.js";
