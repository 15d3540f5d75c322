import { catalogueEntry, type DomainErrorData, type ErrorCode } from '../errors/domain-error';

/** The documented REST body (and status) of an error of the catalogue. */
export function restErrorBody(code: ErrorCode, message: string, data: DomainErrorData = {}): { status: number; body: Record<string, unknown> } {
  const { status, shape } = catalogueEntry(code);
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
