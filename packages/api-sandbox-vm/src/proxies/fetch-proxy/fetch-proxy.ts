import {
  checkedFetch,
  type FetchFunction,
  isPermissionError,
  type PermissionChecker,
} from "@suaveplan/api-sandbox-permissions";
import { SAND_VM_CODES, VmSandboxError } from "../../errors/sand-vm-codes.js";

/** The host side of the fetch capability: a `fetch`-compatible function (default: global `fetch`). */
export type FetchHostAdapter = FetchFunction;

/** A plugin's fetch request as it crosses the membrane. */
export interface FetchWireRequest {
  url: string;
  method: string;
  headers: [string, string][];
  body?: Uint8Array;
}

/** The response handed back to the plugin (body fully read). */
export interface FetchWireResponse {
  status: number;
  statusText: string;
  url: string;
  redirected: boolean;
  headers: [string, string][];
  body: Uint8Array;
}

function isWireRequest(value: unknown): value is FetchWireRequest {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Partial<FetchWireRequest>;
  return (
    typeof r.url === "string" &&
    typeof r.method === "string" &&
    Array.isArray(r.headers) &&
    r.headers.every((h) => Array.isArray(h) && typeof h[0] === "string" && typeof h[1] === "string") &&
    (r.body === undefined || r.body instanceof Uint8Array)
  );
}

function causeCode(error: unknown): string {
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]+$/u.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return "network error";
}

/**
 * Check then forward one fetch. The first URL and every redirect hop are checked by
 * `checkedFetch` (`redirect: "manual"`), so a denied host is never contacted — not even through a
 * redirect. Denials raise `PERMISSION_DENIED`; network failures `SAND_VM_FETCH_FAILED`.
 */
export async function handleFetchCall(
  args: readonly unknown[],
  context: { checker: PermissionChecker; fetch: FetchHostAdapter; signal: AbortSignal },
): Promise<FetchWireResponse> {
  const [request] = args;
  if (!isWireRequest(request))
    throw new VmSandboxError(SAND_VM_CODES.FETCH_FAILED, "fetch: malformed request");
  const shown = JSON.stringify(request.url);
  const init: RequestInit = { method: request.method, headers: request.headers, signal: context.signal };
  if (request.body !== undefined) init.body = request.body;
  try {
    const { response, url, redirects } = await checkedFetch(context.checker, request.url, init, {
      fetch: context.fetch,
    });
    const body = new Uint8Array(await response.arrayBuffer());
    return {
      status: response.status,
      statusText: response.statusText,
      url,
      redirected: redirects > 0,
      headers: [...response.headers],
      body,
    };
  } catch (error) {
    // Denials (first URL or a redirect hop) and redirect limits: messages name only URLs.
    if (isPermissionError(error)) throw error;
    throw new VmSandboxError(SAND_VM_CODES.FETCH_FAILED, `fetch of ${shown} failed: ${causeCode(error)}`);
  }
}
