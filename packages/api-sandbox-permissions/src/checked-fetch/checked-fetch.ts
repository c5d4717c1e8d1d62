import { PERMISSION_CODES, PermissionError } from "../error-codes/permission-codes.js";
import { type PermissionChecker, permissionDeniedError } from "../permission-checker/permission-checker.js";

/** The `fetch` signature {@link checkedFetch} calls (global `fetch` by default). */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

/** Options of {@link checkedFetch}. */
export interface CheckedFetchOptions {
  /** The fetch implementation; always called with `redirect: "manual"`. Default: global `fetch`. */
  fetch?: FetchFunction;
  /** Redirects followed before failing with `PERMISSION_TOO_MANY_REDIRECTS`. Default 20 (as browsers). */
  maxRedirects?: number;
}

/** What {@link checkedFetch} resolves. */
export interface CheckedFetchResult {
  /** The final, non-redirect response (body unread). */
  readonly response: Response;
  /** The URL of the final hop. */
  readonly url: string;
  /** Number of redirects followed. */
  readonly redirects: number;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * The absolute URL a redirect response points to, or `undefined` when `response` is not a
 * redirect (or has no usable `Location`). Use it with `redirect: "manual"` fetches.
 */
export function redirectLocation(response: Response, requestUrl: string): string | undefined {
  if (!REDIRECT_STATUSES.has(response.status)) return undefined;
  const location = response.headers.get("location");
  if (location === null) return undefined;
  try {
    return new URL(location, requestUrl).href;
  } catch {
    return undefined;
  }
}

/**
 * `fetch` with the policy re-checked on every hop: each request is sent with `redirect: "manual"`,
 * and a redirect is only followed after {@link PermissionChecker.checkFetch} allows its target.
 * Method and body are rewritten as the Fetch standard does (303, and 301/302 after POST, become
 * GET without a body); `authorization` and `cookie` headers are dropped on cross-origin hops.
 *
 * @throws PermissionError `PERMISSION_DENIED` when the first URL or any redirect target is denied
 *   (no request is sent to a denied hop); `PERMISSION_TOO_MANY_REDIRECTS` past `maxRedirects`.
 * @throws RangeError when `maxRedirects` is not a non-negative integer (before any request).
 */
export async function checkedFetch(
  checker: PermissionChecker,
  url: string | URL,
  init: RequestInit = {},
  options: CheckedFetchOptions = {},
): Promise<CheckedFetchResult> {
  const fetchImpl: FetchFunction = options.fetch ?? ((input, requestInit) => fetch(input, requestInit));
  const maxRedirects = options.maxRedirects ?? 20;
  // NaN would never compare >= and follow a redirect loop forever.
  if (!Number.isSafeInteger(maxRedirects) || maxRedirects < 0) {
    throw new RangeError(
      `checkedFetch: maxRedirects must be a non-negative integer (got ${String(maxRedirects)})`,
    );
  }
  let method = (init.method ?? "GET").toUpperCase();
  let body = init.body;
  const headers = new Headers(init.headers);
  let current = typeof url === "string" ? url : url.href;
  for (let redirects = 0; ; redirects++) {
    const decision = checker.checkFetch(current);
    if (!decision.allowed) throw permissionDeniedError(decision);
    const requestInit: RequestInit = { ...init, method, headers, redirect: "manual" };
    if (body === undefined || body === null) delete requestInit.body;
    else requestInit.body = body;
    const response = await fetchImpl(decision.url, requestInit);
    const next = redirectLocation(response, decision.url);
    if (next === undefined) return { response, url: decision.url, redirects };
    await response.body?.cancel();
    if (redirects >= maxRedirects) {
      throw new PermissionError(
        PERMISSION_CODES.TOO_MANY_REDIRECTS,
        `fetch of ${JSON.stringify(typeof url === "string" ? url : url.href)} followed more than ${maxRedirects} redirects; ` +
          "raise maxRedirects or fix the redirect loop",
        { details: { maxRedirects } },
      );
    }
    if (
      (response.status === 303 && method !== "HEAD") ||
      ((response.status === 301 || response.status === 302) && method === "POST")
    ) {
      method = "GET";
      body = undefined;
      for (const name of [
        "content-type",
        "content-length",
        "content-encoding",
        "content-language",
        "content-location",
      ]) {
        headers.delete(name);
      }
    }
    if (new URL(next).origin !== new URL(decision.url).origin) {
      headers.delete("authorization");
      headers.delete("cookie");
      headers.delete("proxy-authorization");
    }
    current = next;
  }
}
