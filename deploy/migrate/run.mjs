// `make migrate`: the same runner the Kubernetes migration Job uses (deploy/k8s/base/migrations/run.mjs).
await import("../k8s/base/migrations/run.mjs");
