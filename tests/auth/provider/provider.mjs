// A real OAuth 2.1 authorization server for trio_mcp.auth's tests: panva's
// oidc-provider (a certified OpenID provider), configured from a JSON file the test
// writes, listening on 127.0.0.1.
//
//   node provider.mjs CONFIG.json
//
// CONFIG: {"port": 0 or a port, "keys": {"keys": [private JWKs]},
//          "clients": [{"client_id", "client_secret", "scope"}],
//          "resources": {"<resource URL>": {"scope": "a b", "format": "jwt"|"opaque"}}}
// The first key signs. Once listening it prints one line, `ready <issuer>`, on stdout.
//
// Enabled: client credentials grants, resource indicators (RFC 8707: a token is
// issued for one resource, its `aud`), JWT and opaque access tokens (per resource),
// introspection (RFC 7662) and revocation (RFC 7009).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import Provider, { errors } from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const server = createServer();

await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(config.port ?? 0, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: config.keys,
  clients: config.clients.map((c) => ({
    client_id: c.client_id,
    client_secret: c.client_secret,
    // oidc-provider refuses an empty scope: a client that asks for none has none.
    ...(c.scope ? { scope: c.scope } : {}),
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
  })),
  scopes: [...new Set(Object.values(config.resources).flatMap((r) => r.scope.split(' ')))],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        const known = config.resources[resource];
        if (!known) throw new errors.InvalidTarget();
        return {
          scope: known.scope,
          audience: resource,
          accessTokenTTL: known.ttl ?? 600,
          accessTokenFormat: known.format,
          jwt: { sign: { alg: config.keys.keys[0].alg ?? 'RS256' } },
        };
      },
    },
  },
});
// The tests reach it over plain HTTP on loopback: no proxy in front.
provider.proxy = false;
server.on('request', provider.callback());
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.stdout.write(`ready ${issuer}\n`);
