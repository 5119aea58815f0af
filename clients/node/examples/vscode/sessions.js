// An AuthenticationProvider whose sessions are auth-agent's accounts: VS Code
// asks it for sessions (getSessions → status and token), to log in
// (createSession → login) and to log out (removeSession → logout); the
// agent's userLoggedIn / userLoggedOut, whoever caused them (this window,
// another tool, the server ending a session), become onDidChangeSessions.
// Tokens, refresh tokens and passwords stay in the agent: a session's
// accessToken is asked for each time VS Code asks for sessions.
const vscode = require('vscode');

/** A session id names the agent's provider and account: "corp/alice-sub". */
const sessionId = (provider, account) => `${provider}/${account}`;

/** What people recognise an account by (the agent's order: preferred_username, name, email, login, username). */
function accountLabel(user, fallback) {
  return user?.preferred_username ?? user?.name ?? user?.email ?? user?.login ?? user?.username ?? fallback;
}

class AgentSessions {
  /** @param {import('auth-agent-client').AuthAgent} agent */
  constructor(agent) {
    this.agent = agent;
    this.changes = new vscode.EventEmitter();
    this.onDidChangeSessions = this.changes.event;
    /** The sessions last handed out, by id: a logout announces the one it removes. */
    this.known = new Map();
    this.subscriptions = [
      this.changes,
      listen(agent, 'userLoggedIn', (event) => this.#loggedIn(event)),
      listen(agent, 'userLoggedOut', (event) => this.#loggedOut(event)),
    ];
  }

  /** Every account of every provider, with a token of `scopes` (the agent's token shape). */
  async getSessions(scopes = [], options = {}) {
    const { providers } = await this.agent.status();
    const sessions = [];
    for (const provider of providers) {
      for (const account of provider.accounts ?? []) {
        if (options.account && options.account.id !== sessionId(provider.id, account.id)) continue;
        sessions.push(await this.#session(provider, account.id, account.user, scopes));
      }
    }
    return sessions;
  }

  /**
   * Logs in — the agent asks this window to present the login (presentLogin) —
   * to the configured provider, else the one the person picks.
   */
  async createSession(scopes = []) {
    const provider = await this.#chooseProvider();
    // A person takes the time they take: the agent's own deadline (the login's expiry) bounds it.
    const login = await this.agent.login({ provider: provider.id }, { timeout: Infinity });
    return this.#session(provider, login.account, login.user, scopes);
  }

  async removeSession(id) {
    const cut = id.indexOf('/');
    await this.agent.logout({ provider: id.slice(0, cut), account: id.slice(cut + 1) });
  }

  dispose() {
    for (const subscription of this.subscriptions) subscription.dispose();
  }

  async #session(provider, account, user, scopes) {
    const shape = scopes.length ? { scopes: [...scopes] } : {};
    const { accessToken } = await this.agent.token({ provider: provider.id, account, ...shape });
    const session = {
      id: sessionId(provider.id, account),
      accessToken,
      account: { id: sessionId(provider.id, account), label: `${accountLabel(user, account)} (${provider.displayName})` },
      scopes: [...scopes],
    };
    this.known.set(session.id, session);
    return session;
  }

  async #chooseProvider() {
    const { providers } = await this.agent.status();
    const wanted = vscode.workspace.getConfiguration('authAgent').get('provider');
    const named = providers.find((p) => p.id === wanted);
    if (named || providers.length === 1) return named ?? providers[0];
    const picked = await vscode.window.showQuickPick(
      providers.map((p) => ({ label: p.displayName, description: p.id, provider: p })),
      { placeHolder: 'Log in to' },
    );
    if (!picked) throw new vscode.CancellationError();
    return picked.provider;
  }

  async #loggedIn({ provider, account }) {
    const { providers } = await this.agent.status();
    const described = providers.find((p) => p.id === provider);
    const user = described?.accounts?.find((a) => a.id === account)?.user;
    const known = this.known.has(sessionId(provider, account));
    const session = await this.#session(described ?? { id: provider, displayName: provider }, account, user, []);
    this.changes.fire({ added: known ? [] : [session], removed: [], changed: known ? [session] : [] });
  }

  #loggedOut({ provider, account }) {
    const id = sessionId(provider, account);
    const session = this.known.get(id) ?? { id, accessToken: '', account: { id, label: account }, scopes: [] };
    this.known.delete(id);
    this.changes.fire({ added: [], removed: [session], changed: [] });
  }
}

/** An agent listener as a Disposable; a failed status or token call is logged, not thrown at the emitter. */
function listen(agent, event, handler) {
  const listener = (params) => {
    Promise.resolve(handler(params)).catch((error) => console.error(`auth-agent ${event}:`, error));
  };
  agent.on(event, listener);
  return new vscode.Disposable(() => agent.off(event, listener));
}

module.exports = { AgentSessions, accountLabel, sessionId };
