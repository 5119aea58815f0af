// auth-agent as VS Code's authentication provider "auth-agent": extensions
// call vscode.authentication.getSession('auth-agent', scopes, {createIfNone:
// true}) and get a token of one of the agent's accounts, the agent running the
// login, this window presenting it.
const vscode = require('vscode');

const { AgentSessions } = require('./sessions.js');
const { presentLogin } = require('./present.js');

let agent;

async function activate(context) {
  // auth-agent-client is an ES module: imported, not required.
  const { AuthAgent } = await import('auth-agent-client');
  const settings = vscode.workspace.getConfiguration('authAgent');
  agent = await AuthAgent.connect({ bin: settings.get('path') || undefined, args: settings.get('args') ?? [], stderr: 'capture' });
  agent.onPresentLogin(presentLogin);
  await agent.subscribe({ events: ['userLoggedIn', 'userLoggedOut'] });
  const sessions = new AgentSessions(agent);
  context.subscriptions.push(
    sessions,
    vscode.authentication.registerAuthenticationProvider('auth-agent', 'auth-agent', sessions, {
      supportsMultipleAccounts: true,
    }),
  );
}

async function deactivate() {
  await agent?.close();
  agent = undefined;
}

module.exports = { activate, deactivate };
