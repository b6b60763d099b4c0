import cliProgress from 'cli-progress';

/** A progress bar that also prints a line every few seconds when output is not a terminal (CI logs). */
export function progressBar(label: string, total: number): { update(value: number): void; stop(): void } {
  const bar = new cliProgress.SingleBar(
    { format: `${label.padEnd(28)} [{bar}] {percentage}% | {value}/{total} | {duration}s`, noTTYOutput: true, notTTYSchedule: 5000, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return {
    update: (value) => bar.update(Math.min(value, total)),
    stop: () => {
      bar.update(total);
      bar.stop();
    },
  };
}

export function say(line: string): void {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}
