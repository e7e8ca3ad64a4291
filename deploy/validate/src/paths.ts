import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const repoPath = (...parts: string[]) => path.join(REPO_ROOT, ...parts);
