import { DomainError } from '../errors/domain-error';
import type { RequestScope } from '../request-scope';
import type { Principal } from './principal';

/** Every operation but introspection needs a valid token (401 otherwise). */
export function requirePrincipal(scope: RequestScope): Principal {
  if (!scope.principal) throw new DomainError('UNAUTHENTICATED', 'Missing, unknown or revoked bearer token');
  return scope.principal;
}

/** Operations the document reserves for organization tokens answer 403 to account tokens. */
export function requireOrganizationToken(scope: RequestScope): Principal {
  const principal = requirePrincipal(scope);
  if (principal.kind !== 'organization') {
    throw new DomainError('ORGANIZATION_TOKEN_REQUIRED', 'This operation requires an organization token');
  }
  return principal;
}
