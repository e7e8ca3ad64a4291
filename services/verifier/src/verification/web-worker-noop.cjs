// ffjavascript pulls in the `web-worker` package, which, when loaded inside any worker thread, assumes it is the
// thread it spawned itself and `require`s `workerData.mod`. Verification workers point it at this empty module.
