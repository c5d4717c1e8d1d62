/** Identifier prefix of plugin modules; also what `import.meta.url` starts with inside the sandbox. */
export const PLUGIN_URL_PREFIX = "sandbox:/plugin/";
