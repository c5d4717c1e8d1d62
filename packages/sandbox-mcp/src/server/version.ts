/** The version this server reports in its MCP `initialize` answer. */
export const VERSION = "0.1.0";
