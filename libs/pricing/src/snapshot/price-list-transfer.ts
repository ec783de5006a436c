import type { ContentCoding, EncodedPriceList } from '../rendering/price-list-response';
import type { ListedRecord } from '../core/build-price-list';

// What crosses between the main thread and the price list worker (price-list-worker.ts): plain
// data only (structured clone): listed records (instants as epoch milliseconds), bodies as
// transferred buffers.

/** A part of a history; the first part of a new `historyId` replaces the history the worker holds. */
export interface HistoryPart {
  readonly kind: 'history';
  readonly historyId: number;
  readonly first: boolean;
  readonly writes: readonly number[];
  readonly records: readonly ListedRecord[];
}

export interface RenderRequest {
  readonly kind: 'render';
  readonly id: number;
  readonly historyId: number;
  readonly instantMs: number;
}

export type ToWorker = HistoryPart | RenderRequest;

/** An encoded list with its bodies as whole ArrayBuffers (transferable). */
export interface TransferredPriceList extends Omit<EncodedPriceList, 'bodies'> {
  readonly bodies: Readonly<Record<ContentCoding, ArrayBuffer>>;
}

export type FromWorker =
  { readonly id: number; readonly encoded: TransferredPriceList } | { readonly id: number; readonly error: string };

/** The fields of a listed record only (a held price has more), for a smaller message. */
export function toPlain(record: ListedRecord): ListedRecord {
  const { productKey, organizationId, unitType, unitCount, amount, validFrom, validUntil } = record;
  return { productKey, organizationId, unitType, unitCount, amount, validFrom, validUntil };
}

/** The encoded list with each body in an ArrayBuffer of its own, and the list of them to transfer. */
export function forTransfer(encoded: EncodedPriceList): { list: TransferredPriceList; transfer: ArrayBuffer[] } {
  const own = (body: Buffer): ArrayBuffer => {
    // A small Buffer is a slice of a shared pool: transferring the pool would detach it.
    if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer)
      return body.buffer;
    const copy = new Uint8Array(body.byteLength);
    copy.set(body);
    return copy.buffer;
  };
  const bodies = { identity: own(encoded.bodies.identity), gzip: own(encoded.bodies.gzip), br: own(encoded.bodies.br) };
  return { list: { ...encoded, bodies }, transfer: [bodies.identity, bodies.gzip, bodies.br] };
}

export function fromTransfer(list: TransferredPriceList): EncodedPriceList {
  const { identity, gzip, br } = list.bodies;
  return { ...list, bodies: { identity: Buffer.from(identity), gzip: Buffer.from(gzip), br: Buffer.from(br) } };
}
