// make down: stops the stack that make up started (its own process stops the services and the devnet).
import { sleep } from "@humanpass/retry";
import { readStackFile, removeStackFile } from "./stack-file.ts";

const file = readStackFile();
if (!file) {
  process.stdout.write("humanpass: nothing running\n");
  process.exit(0);
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
if (alive(file.pid)) process.kill(file.pid, "SIGTERM");
const deadline = Date.now() + 20_000;
while (alive(file.pid) && Date.now() < deadline) await sleep(200);
for (const pid of [file.pid, ...Object.values(file.servicePids), ...(file.natsPid ? [file.natsPid] : [])])
  if (alive(pid)) process.kill(pid, "SIGKILL");
removeStackFile();
process.stdout.write("humanpass: stopped\n");
