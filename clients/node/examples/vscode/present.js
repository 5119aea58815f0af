// How this window presents the agent's logins (the presentLogin request):
// on the person's side of a remote session, through VS Code's own openers.
const vscode = require('vscode');

/**
 * A browser login: env.asExternalUri on the agent's loopback redirect makes
 * VS Code forward that port from a remote (SSH, container, WSL) to this
 * machine, so the browser's redirect reaches the agent; then env.openExternal
 * opens the authorization URL here. Where the redirect cannot be forwarded as
 * is (a web-based VS Code maps it to another address), the person pastes the
 * address the browser ended at instead. A device code is copied to the
 * clipboard, shown, and its page opened. Declining VS Code's "open this
 * website?" question cancels the login.
 */
async function presentLogin(params) {
  if (params.kind === 'deviceCode') {
    await vscode.env.clipboard.writeText(params.userCode);
    vscode.window.showInformationMessage(
      `Your code for ${params.displayName}: ${params.userCode} (copied). Enter it at ${params.verificationUri}.`,
    );
    const page = params.verificationUriComplete ?? params.verificationUri;
    return (await vscode.env.openExternal(vscode.Uri.parse(page))) ? { opened: true } : { cancelled: true };
  }
  const forwarded = params.redirectUri ? await reachesAgent(params.redirectUri) : true;
  if (!(await vscode.env.openExternal(vscode.Uri.parse(params.url)))) return { cancelled: true };
  if (forwarded) return { opened: true };
  const pasted = await vscode.window.showInputBox({
    prompt: `After signing in to ${params.displayName}, paste the address the browser ended at`,
    placeHolder: `${params.redirectUri}?code=…&state=…`,
    ignoreFocusOut: true,
  });
  return pasted ? { redirectUrl: pasted.trim() } : { cancelled: true };
}

/** Whether the browser's redirect to `redirectUri` reaches the agent once VS Code forwards it. */
async function reachesAgent(redirectUri) {
  const local = vscode.Uri.parse(redirectUri);
  const external = await vscode.env.asExternalUri(local);
  return external.scheme === local.scheme && external.authority === local.authority;
}

module.exports = { presentLogin };
