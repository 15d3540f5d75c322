import { catalogueEntry, type DomainErrorData, type ErrorCode, type RestErrorShape } from '../errors/domain-error';

/**
 * The documented REST body (and status) of an error of the catalogue; `shape` where a route's document writes
 * this error in another of the documented shapes.
 */
export function restErrorBody(
  code: ErrorCode,
  message: string,
  data: DomainErrorData = {},
  shapeOverride?: RestErrorShape,
): { status: number; body: Record<string, unknown> } {
  const { status, shape: catalogueShape } = catalogueEntry(code);
  const shape = shapeOverride ?? catalogueShape;
  switch (shape) {
    case 'generic':
      return { status, body: { error: status, message } };
    case 'organization':
      return { status, body: { statusCode: status, message, error: 'Not Found' } };
    case 'msg':
      return { status, body: { success: false, msg: message } };
    case 'msgPayload':
      return { status, body: { success: false, msg: code, payload: data.payload ?? {} } };
    case 'coded':
      return { status, body: { success: false, code, msg: message, missing_fields: data.missingFields ?? [] } };
  }
}
