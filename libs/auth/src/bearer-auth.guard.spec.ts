import { Controller, Get, type ExecutionContext, type Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { AuthError } from './auth.error';
import { BearerAuthGuard } from './bearer-auth.guard';
import { isPublic, Public } from './public.decorator';

@Controller('private')
class PrivateController {
  @Get()
  read(): void {}

  @Public()
  @Get('open')
  open(): void {}
}

@Public()
@Controller('public')
class PublicController extends PrivateController {}

function contextOf(controller: Type, handler: (...args: never[]) => unknown, authorization?: string): ExecutionContext {
  const req = { headers: authorization === undefined ? {} : { authorization } };
  return new ExecutionContextHost([req, {}, () => undefined], controller, handler);
}

describe('BearerAuthGuard', () => {
  const guard = new BearerAuthGuard(new Reflector(), { tokens: ['secret-token'] });
  const read = PrivateController.prototype.read;

  it('lets a @Public() route through without a token, and asks every other route for one', () => {
    expect(guard.canActivate(contextOf(PrivateController, PrivateController.prototype.open))).toBe(true);
    expect(() => guard.canActivate(contextOf(PrivateController, read))).toThrow(AuthError);
    expect(() => guard.canActivate(contextOf(PrivateController, read, 'Bearer wrong'))).toThrow(AuthError);
    expect(guard.canActivate(contextOf(PrivateController, read, 'Bearer secret-token'))).toBe(true);
  });

  it('tells a handler apart by its controller: public where the controller is, on every request', () => {
    // The same function is the handler of both controllers (inherited); only PublicController is public.
    for (let i = 0; i < 2; i++) {
      expect(guard.canActivate(contextOf(PublicController, read))).toBe(true);
      expect(() => guard.canActivate(contextOf(PrivateController, read))).toThrow(AuthError);
    }
  });
});

describe("isPublic, for a guard of the host's own", () => {
  const reflector = new Reflector();

  it('is true where @Public() marks the handler or the controller, and false elsewhere', () => {
    expect(isPublic(contextOf(PrivateController, PrivateController.prototype.open), reflector)).toBe(true);
    expect(isPublic(contextOf(PublicController, PrivateController.prototype.read), reflector)).toBe(true);
    expect(isPublic(contextOf(PrivateController, PrivateController.prototype.read), reflector)).toBe(false);
  });
});
