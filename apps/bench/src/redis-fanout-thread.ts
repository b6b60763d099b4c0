import { parentPort, workerData } from 'node:worker_threads';
import { serveFanoutThread, type FanoutThreadData } from './redis-fanout.js';

// The Redis baseline's fan-out workers, in a thread of their own.
if (parentPort) await serveFanoutThread(workerData as FanoutThreadData, parentPort);
