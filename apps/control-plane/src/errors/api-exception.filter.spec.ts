import type { ArgumentsHost } from '@nestjs/common';
import { PRICING_ERROR_STATUS, PricingError, PricingErrorCode } from '@app/pricing';
import { ApiExceptionFilter } from './api-exception.filter';

/** What the filter wrote: the status, the headers it set and the body. */
function answerTo(exception: unknown): { status: number; headers: Record<string, string>; body: unknown } {
  const headers: Record<string, string> = {};
  let body = '';
  const res = {
    statusCode: 200,
    setHeader: (name: string, value: string | number) => void (headers[name.toLowerCase()] = String(value)),
    end: (text: string) => void (body = text),
  };
  const host = {
    switchToHttp: () => ({ getResponse: () => res, getRequest: () => ({ id: 'req-1' }) }),
  } as unknown as ArgumentsHost;
  new ApiExceptionFilter().catch(exception, host);
  return { status: res.statusCode, headers, body: JSON.parse(body) as unknown };
}

describe("ApiExceptionFilter, on the pricing library's errors", () => {
  it.each(Object.values(PricingErrorCode))('answers %s with the status the library maps it to', (code) => {
    const answer = answerTo(new PricingError(code, `a ${code}`, { product_key: 'storage.gp1' }));
    expect(answer.status).toBe(PRICING_ERROR_STATUS[code]);
    expect(answer.body).toEqual({ error: { code, message: `a ${code}`, details: { product_key: 'storage.gp1' } } });
    expect(answer.headers['retry-after']).toBe(PRICING_ERROR_STATUS[code] === 503 ? '30' : undefined);
  });
});
