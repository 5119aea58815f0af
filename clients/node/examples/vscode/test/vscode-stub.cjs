// A stand-in for the `vscode` module, only as much of it as the sample uses,
// with the behaviour VS Code documents: EventEmitter/Disposable, Uri.parse
// (scheme, authority, path, query), env.openExternal (resolves false when the
// person declines), env.asExternalUri, env.clipboard, window messages and
// input, workspace settings, authentication.registerAuthenticationProvider.
// Every call is recorded in `calls` as [name, ...args]; tests set `behaviour`
// (what the person or the editor does) and `settings`.
const calls = [];
const behaviour = {};
const settings = {};

const record = (name, ...args) => calls.push([name, ...args]);

class Disposable {
  constructor(callOnDispose) {
    this.callOnDispose = callOnDispose;
  }

  dispose() {
    this.callOnDispose?.();
    this.callOnDispose = undefined;
  }
}

class EventEmitter {
  #listeners = new Set();

  event = (listener) => {
    this.#listeners.add(listener);
    return new Disposable(() => this.#listeners.delete(listener));
  };

  fire(data) {
    record('fire', data);
    for (const listener of [...this.#listeners]) listener(data);
  }

  dispose() {
    this.#listeners.clear();
  }
}

class CancellationError extends Error {
  constructor() {
    super('Canceled');
    this.name = 'Canceled';
  }
}

class Uri {
  constructor(url) {
    this.scheme = url.protocol.slice(0, -1);
    this.authority = url.host;
    this.path = url.pathname;
    this.query = url.search.slice(1);
    this.href = url.href;
  }

  static parse(value) {
    return new Uri(new URL(value));
  }

  toString() {
    return this.href;
  }
}

const vscode = {
  calls,
  behaviour,
  settings,
  Disposable,
  EventEmitter,
  CancellationError,
  Uri,
  authentication: {
    registerAuthenticationProvider(id, label, provider, options) {
      record('registerAuthenticationProvider', id, label, provider, options);
      return new Disposable(() => record('unregisterAuthenticationProvider', id));
    },
  },
  env: {
    async openExternal(uri) {
      record('openExternal', uri.toString());
      return behaviour.openExternal ? behaviour.openExternal(uri.toString()) : true;
    },
    async asExternalUri(uri) {
      record('asExternalUri', uri.toString());
      return behaviour.asExternalUri ? Uri.parse(behaviour.asExternalUri(uri.toString())) : uri;
    },
    clipboard: {
      async writeText(text) {
        record('clipboard.writeText', text);
      },
    },
  },
  window: {
    showInformationMessage(message, ...items) {
      record('showInformationMessage', message, ...items);
      return Promise.resolve(undefined);
    },
    async showInputBox(options) {
      record('showInputBox', options);
      return behaviour.showInputBox ? behaviour.showInputBox(options) : undefined;
    },
    async showQuickPick(items, options) {
      record('showQuickPick', items, options);
      return behaviour.showQuickPick ? behaviour.showQuickPick(items) : undefined;
    },
  },
  workspace: {
    getConfiguration(section) {
      return { get: (key) => settings[`${section}.${key}`] };
    },
  },
};

module.exports = vscode;
