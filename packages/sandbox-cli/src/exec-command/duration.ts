/** The largest timer Node honours (ms); a larger delay would fire at once. */
export const MAX_DURATION_MS = 2_147_483_647;
