/**
 * @maka/mcp — tools from MCP servers behind the tool port of `@maka/tools`. This package is the
 * shell's edge to MCP: it owns the official SDK, the child processes of stdio servers and the HTTP
 * connections to Streamable HTTP servers on loopback. It reads the config files users already
 * write (`.mcp.json`, `mcp.json`, `--mcp-config`), gives every server tool a recovery mode from its
 * annotations (a server entry may lower it, never raise it), and a digest of its declaration that
 * host facts carry for the catalog gate. A call never rejects: every failure is an error outcome.
 */
export {
  type McpRecoveryMode,
  type McpServerCommon,
  type McpStdioServer,
  type McpHttpServer,
  type McpServerConfig,
  type McpConfig,
  type McpConfigErrorCode,
  type McpConfigError,
  McpConfigErrorSentences,
  expandVariables,
  isLoopbackUrl,
  parseMcpConfigFile,
  mergeMcpConfigs,
} from './McpConfig.js'
export { type McpConfigSources, USER_MCP_CONFIG, PROJECT_MCP_CONFIG, loadMcpConfig } from './loadMcpConfig.js'
export { type RecoveryHints, type McpRecovery, recoveryFromAnnotations } from './recoveryFromAnnotations.js'
export { mcpResultText } from './mcpResultText.js'
export {
  MCP_CALL_TIMEOUT_MS,
  MCP_START_TIMEOUT_MS,
  IDEMPOTENCY_META_KEY,
  type McpToolEntry,
  type McpServerStatus,
  type McpTools,
  type McpOpenOptions,
  openMcpTools,
} from './openMcpTools.js'
