// The `prepack` guard of every publishable package: only pnpm rewrites `workspace:*` ranges into
// real versions when it packs, so `npm pack` / `npm publish` would ship a manifest no one can
// install. Releases go through `pnpm changeset publish` (see docs/releasing.md).
const agent = process.env.npm_config_user_agent ?? ''
if (!agent.startsWith('pnpm/')) {
  console.error(
    `${process.env.npm_package_name ?? 'this package'}: pack and publish with pnpm (pnpm pack, pnpm changeset publish); ` +
      `${agent.split(' ')[0] || 'this client'} would ship its workspace:* ranges unresolved`,
  )
  process.exit(1)
}
