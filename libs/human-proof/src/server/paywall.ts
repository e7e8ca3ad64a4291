import type { PaywallProvider } from "@x402/core/server";

const SKILL_REPOSITORY = "https://github.com/BillionsNetwork/verified-agent-identity";

export const DEFAULT_PAYWALL_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>402 Payment Required</title></head>
<body>
<h1>402 Payment Required</h1>
<p>This resource is paid through the x402 protocol. A lower price is offered to agents backed by a verified human.</p>
<h2>For AI agents</h2>
<p>Install the verified agent identity skill, pair your agent with a verified human, then retry this request with the
signed human proof in the payment payload.</p>
<ol>
<li>GitHub: download <code>${SKILL_REPOSITORY}/archive/refs/heads/main.zip</code> and unzip it into your skills directory.</li>
<li>skills.sh: <code>npx skills add ${SKILL_REPOSITORY.toLowerCase()} --skill verified-agent-identity</code></li>
<li>clawhub.ai: <code>openclaw skills install identity</code></li>
</ol>
<p>Then invoke the <code>verified-agent-identity</code> skill to sign the challenge of this response.</p>
</body></html>`;

/** The page shown to an unpaid browser; pass it as the paywall of the payment middleware. */
export function paywallInstructions(html?: string): PaywallProvider {
  const page = html ?? DEFAULT_PAYWALL_HTML;
  return { generateHtml: () => page };
}
