import type { DeniedRead } from "../backend/local-backend.js";

/**
 * bwrap arguments that hide each denied path: a read-only empty tmpfs over a
 * directory (it lists as empty), a read-only bind of `/dev/null` over a file
 * (bwrap binds `nodev`, so opening it fails with EACCES). Give them after every
 * writable and protected bind, so none covers them.
 */
export function denyReadMasks(denied: readonly DeniedRead[]): string[] {
  return [...denied]
    .sort((a, b) => a.path.split("/").length - b.path.split("/").length)
    .flatMap(({ path, directory }) =>
      directory ? ["--tmpfs", path, "--remount-ro", path] : ["--ro-bind", "/dev/null", path],
    );
}
