/** The optional demo page of spec 1: request, QR code of the universal link, status polling until verified. */
export function demoPage(walletUrl: string): string {
  const wallet = JSON.stringify(walletUrl.replace(/\/+$/, "")).replace(/</g, "\\u003c");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Proof of Uniqueness</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem; color: #1d1d1f; }
  button { font-size: 1.1rem; padding: 0.6rem 1.4rem; border-radius: 0.5rem; border: 0; background: #3a50f0; color: #fff; cursor: pointer; }
  button:disabled { opacity: 0.5; cursor: default; }
  #qr img { width: 18rem; height: 18rem; margin-top: 1.5rem; image-rendering: pixelated; }
  #status { margin-top: 1rem; font-weight: 600; }
  #status[data-state="verified"] { color: #0a7d32; }
  #status[data-state="failed"] { color: #b00020; }
</style>
</head>
<body>
<h1>Proof of Uniqueness</h1>
<p>Prove with your wallet that you are a unique person. Nothing about you is shared.</p>
<button id="verify" type="button">Verify</button>
<div id="qr"></div>
<p id="link" hidden><a id="wallet-link" href="#">Open in wallet</a></p>
<p id="status" role="status" aria-live="polite"></p>
<script>
(() => {
  const walletUrl = ${wallet};
  const button = document.getElementById("verify");
  const qr = document.getElementById("qr");
  const status = document.getElementById("status");
  const show = (text, state) => { status.textContent = text; status.dataset.state = state; };
  const toBase64 = (text) => {
    const bytes = new TextEncoder().encode(text);
    let binary = "";
    for (const b of bytes) binary += String.fromCharCode(b);
    return btoa(binary);
  };
  let timer;
  const poll = (sessionId) => {
    timer = setTimeout(async () => {
      try {
        const response = await fetch("/api/status/" + sessionId, { cache: "no-store" });
        const body = await response.json();
        if (body.status === "success") { show("verified", "verified"); button.disabled = false; return; }
        if (body.status === "expired" || body.status === "not_found") { show("expired, try again", "failed"); button.disabled = false; return; }
      } catch (e) { /* keep polling through network hiccups */ }
      poll(sessionId);
    }, 1000);
  };
  button.addEventListener("click", async () => {
    clearTimeout(timer);
    button.disabled = true;
    show("creating request…", "pending");
    try {
      const response = await fetch("/api/verification-request", { cache: "no-store" });
      if (!response.ok) throw new Error("HTTP " + response.status);
      const request = await response.json();
      const sessionId = request.body.scope[0].id;
      const link = walletUrl + "/#i_m=" + toBase64(JSON.stringify(request));
      const img = document.createElement("img");
      img.alt = "QR code: scan with your wallet";
      img.src = "/demo/qr.svg?data=" + encodeURIComponent(link);
      qr.replaceChildren(img);
      document.getElementById("wallet-link").href = link;
      document.getElementById("link").hidden = false;
      show("waiting for your wallet…", "pending");
      poll(sessionId);
    } catch (e) {
      show("could not create a request: " + e.message, "failed");
      button.disabled = false;
    }
  });
})();
</script>
</body>
</html>
`;
}
