/**
 * Which isolated-vm majors this package drives, and which of them load on
 * which Node line (each major declares its own `engines`): 5.x builds on
 * Node 20 and 22, 6.x on 22 and later, 7.x on 24 and later. CI tests
 * Node 20 + 5.x, 22 + 6.x and 24 + 7.x.
 */
export const ISOLATED_VM_MAJORS = [5, 6, 7] as const;

/** The isolated-vm majors that install and load on Node `nodeMajor`, oldest first. */
export function isolatedVmMajorsFor(nodeMajor: number): readonly number[] {
  if (nodeMajor < 22) return [5];
  if (nodeMajor < 24) return [5, 6];
  return [6, 7];
}

/** The `npm i` line for Node `nodeMajor`: the newest major that line supports. */
export function isolatedVmInstallHint(nodeMajor: number): string {
  const majors = isolatedVmMajorsFor(nodeMajor);
  return `Install the optional peer dependency with \`npm i isolated-vm@${majors[majors.length - 1]}\` (the newest major for Node ${nodeMajor}; it builds a native addon: needs python3, make and a C++ compiler when no prebuilt binary matches); isolates run in this process under \`node --no-node-snapshot\`, in a helper process otherwise`;
}
