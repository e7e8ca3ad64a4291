// `make migrate` and `make up`: the same topology step the Kubernetes migration Job runs (deploy/k8s/base/migrations/topology.mjs).
await import("../k8s/base/migrations/topology.mjs");
