import type { SandboxResult } from "../types/sandbox-types.js";
import { thrownAt } from "./parity-expect.js";
import type { ParityRow } from "./parity-table.js";

const ok = (result: unknown, logs: SandboxResult["logs"] = []) => ({ success: true as const, result, logs });

/**
 * Parity rows for `URL` and `URLSearchParams` (see {@link ParityRow}); spread
 * into PARITY_ROWS. The guest's URL is the kernel's own (no host object), so
 * every engine must give the same values here, to the character, on every
 * Node line: the URL Standard's as Node 24 implements it; the invalid-URL
 * error is Node's `TypeError` (message, code, input).
 */
export const PARITY_URL_ROWS: readonly ParityRow[] = [
  {
    name: "URL: relative resolution against a base (dot segments, scheme-relative, backslashes, query only)",
    code: "[new URL('../c?x#y', 'https://a.b/p/q/r').href, new URL('//h2/z', 'http://h/a').href, new URL('\\\\\\\\x\\\\y', 'http://h/').href, new URL('?q', 'sc:/p#f').href]",
    expected: ok(["https://a.b/p/c?x#y", "http://h2/z", "http://x/y", "sc:/p?q"]),
  },
  {
    name: "URL: searchParams is live both ways (append, delete, search +=)",
    code: "const u = new URL('https://a.b/?q=1&r=a+b'); u.searchParams.append('s', 'é &'); u.searchParams.delete('q'); u.search += '&t'; [u.href, u.searchParams.get('r'), [...u.searchParams], u.searchParams.size]",
    expected: ok([
      "https://a.b/?r=a+b&s=%C3%A9+%26&t",
      "a b",
      [
        ["r", "a b"],
        ["s", "é &"],
        ["t", ""],
      ],
      3,
    ]),
  },
  {
    name: "URL: setters (protocol, host, pathname, search, hash, username, default port, hostname)",
    code: "const u = new URL('http://a.com/p'); u.protocol = 'https'; u.host = 'b.com:8080'; u.pathname = '/x y'; u.search = 'k=v'; u.hash = 'h'; u.username = 'me'; u.port = '443'; u.hostname = 'C.com'; [u.href, u.origin, u.host]",
    expected: ok(["https://me@c.com/x%20y?k=v#h", "https://c.com", "c.com"]),
  },
  {
    name: "URL: an invalid URL throws Node's TypeError (message, code, input); canParse and parse say no",
    code: "try { new URL('nope') } catch (e) { [e.name, e.message, e.code, e.input, e instanceof TypeError, URL.canParse('nope'), URL.parse('nope')] }",
    expected: ok(["TypeError", "Invalid URL", "ERR_INVALID_URL", "nope", true, false, null]),
  },
  {
    name: "URL: an uncaught invalid URL fails the run as a guest TypeError",
    code: "new URL('nope')",
    expected: thrownAt("TypeError", "Invalid URL", 1, 1),
    byEngine: { quickjs: thrownAt("TypeError", "Invalid URL", 1, 4) },
  },
  {
    name: "URL: non-ASCII hosts are lower-cased and Punycode-encoded",
    code: "[new URL('https://Bücher.example/ä').href, new URL('http://xn--bcher-kva.example').hostname, new URL('http://日本語。jp').host]",
    expected: ok(["https://xn--bcher-kva.example/%C3%A4", "xn--bcher-kva.example", "xn--wgv71a119e.jp"]),
  },
  {
    name: "URL: IPv4 number hosts (hex, octal, one number) and IPv6 compression",
    code: "[new URL('http://0x7f.1/').host, new URL('http://2130706433').href, new URL('http://0300.0250.1').host, URL.canParse('http://256.0.0.1.1/'), new URL('http://[0:0::1]:80/').href]",
    expected: ok(["127.0.0.1", "http://127.0.0.1/", "192.168.0.1", false, "http://[::1]/"]),
  },
  {
    name: "URL: file URLs (drive letters, localhost, relative) and an opaque javascript: path",
    code: "[new URL('file:///C|/a/../b').href, new URL('file://localhost/x').href, new URL('d', 'file:///C:/a/b').href, new URL('..', 'file:///C:/').href, new URL('javascript:alert(1) ').pathname]",
    expected: ok(["file:///C:/b", "file:///x", "file:///C:/a/d", "file:///C:/", "alert(1)"]),
  },
  {
    name: "URLSearchParams: stable sort by UTF-16 code units, form-urlencoded toString, record and pairs",
    code: "const p = new URLSearchParams('z=1&a=2&é=3&a=1&%F0%9F%98%80=4&ﬃ=5'); p.sort(); [p.toString(), p.size, [...p.keys()], new URLSearchParams({ q: 'a b&c~*' }).toString(), new URLSearchParams([['x', '1'], ['x', '2']]).getAll('x')]",
    expected: ok([
      "a=2&a=1&z=1&%C3%A9=3&%F0%9F%98%80=4&%EF%AC%83=5",
      6,
      ["a", "a", "z", "é", "😀", "ﬃ"],
      "q=a+b%26c%7E*",
      ["1", "2"],
    ]),
  },
  {
    name: "URL: String, JSON.stringify, Object.prototype.toString and instanceof",
    code: "const u = new URL('https://a.b/c?d#e'); [String(u), JSON.stringify({ u }), Object.prototype.toString.call(u), u instanceof URL, Object.prototype.toString.call(u.searchParams)]",
    expected: ok([
      "https://a.b/c?d#e",
      '{"u":"https://a.b/c?d#e"}',
      "[object URL]",
      true,
      "[object URLSearchParams]",
    ]),
  },
  {
    name: "URL: console.log shows `URL {}` (the kernel's inspect runs no custom inspect; Node prints the fields)",
    code: "console.log(new URL('https://a.b/c'), new URLSearchParams('a=1'))",
    expected: ok(undefined, [{ level: "log", message: "URL {} URLSearchParams {}" }]),
  },
];
