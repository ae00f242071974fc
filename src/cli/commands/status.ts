import { Command } from 'commander';
import { streamStatus, type StreamStatus } from '../../db/queries/status.js';
import { EXIT } from '../exit.js';
import { connectDb, loadEnv } from '../runtime.js';

export function formatStatus(rows: StreamStatus[]): string {
  if (rows.length === 0) return 'no streams yet: run `gateway-ingest backfill ...`\n';
  return rows
    .map((s) => {
      const p = s.partitions;
      const lines = [
        `${s.name ? `${s.name} (${s.streamKey})` : s.streamKey}`,
        `  partitions: ${p.done} done, ${p.pending} pending, ${p.running} running, ${p.failed} failed`,
        `  rows written: ${s.rowsWritten}; calls: ${s.calls}, billed ${s.billedCalls} (${s.units} units), today ${s.billedCallsToday} (${s.unitsToday} units)`,
        `  last success: ${s.lastSuccessAt?.toISOString() ?? 'never'}`,
      ];
      if (s.lastError) lines.push(`  last error: [${s.lastErrorKind}] ${s.lastError}`);
      for (const f of s.failedPartitions.slice(0, 5)) lines.push(`  failed ${f.partitionKey}: [${f.kind}] ${f.error}`);
      return lines.join('\n');
    })
    .join('\n\n')
    .concat('\n');
}

export function statusCommand(): Command {
  return new Command('status')
    .description('per stream: partitions done / pending / failed, rows, billed calls and units, last error')
    .option('--json', 'machine-readable output')
    .action(async (f: { json?: boolean }) => {
      const env = loadEnv();
      const db = await connectDb(env);
      try {
        const rows = await streamStatus(db.db);
        process.stdout.write(f.json ? `${JSON.stringify(rows, null, 2)}\n` : formatStatus(rows));
        process.exitCode = EXIT.ok;
      } finally {
        await db.close();
      }
    });
}
