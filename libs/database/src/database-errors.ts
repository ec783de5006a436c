import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';

/** The database could not be reached or did not answer: nothing was written. */
export class DatabaseUnavailableError extends Error {
  constructor(override readonly cause: unknown) {
    super(`the database is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * Runs database work and tells the two ways it can fail apart, by type rather than by message
 * text: PostgreSQL answered with an error (a DatabaseError with its SQLSTATE, thrown as is), or
 * no answer came (a socket error, a timeout, a connection terminated or not yet made, or a
 * SQLSTATE of a lost or refused connection), thrown as DatabaseUnavailableError.
 */
export async function databaseCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw isAnswered(error) ? error : new DatabaseUnavailableError(error);
  }
}

/** Whether PostgreSQL answered the call with an error (not one of a lost or refused connection). */
export function isAnswered(error: unknown): boolean {
  const cause: unknown = error instanceof QueryFailedError ? error.driverError : error;
  if (!(cause instanceof DatabaseError)) return false;
  const state = cause.code ?? '';
  // 08: connection exception; 57P01-03: shutdown, crash, cannot connect now; 53300: too many connections.
  return !(state.startsWith('08') || /^57P0[123]$/.test(state) || state === '53300');
}
