import { parentPort } from 'node:worker_threads';
import { encodePriceList } from '../rendering/price-list-response';
import type { ListedRecord } from '../core/build-price-list';
import { forTransfer, type FromWorker, type ToWorker } from './price-list-transfer';

// The price list worker (PriceListRenderer): builds, serializes, hashes and compresses the list
// with the same pure code as the main thread, so that a rebuild of a large list never holds the
// event loop that serves requests. It keeps the last history it was sent: rendering the same
// history at the next scheduled instant needs only the instant.

let historyId = -1;
let records: ListedRecord[] = [];
let writes: number[] = [];

const port = parentPort;
if (!port) throw new Error('price-list-worker runs as a worker thread (PriceListRenderer starts it)');

port.on('message', (message: ToWorker) => {
  if (message.kind === 'history') {
    if (message.first) {
      historyId = message.historyId;
      records = [];
      writes = [...message.writes];
    }
    for (const record of message.records) records.push(record);
    return;
  }
  let reply: FromWorker;
  let transfer: ArrayBuffer[] = [];
  try {
    if (message.historyId !== historyId) throw new Error(`history ${message.historyId} was never sent`);
    const encoded = forTransfer(encodePriceList({ records, writes }, new Date(message.instantMs)));
    reply = { id: message.id, encoded: encoded.list };
    transfer = encoded.transfer;
  } catch (error) {
    reply = { id: message.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  port.postMessage(reply, transfer);
});
