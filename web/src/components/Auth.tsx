/**
 * Inbound auth (docs/auth.md): who the server thinks the caller is (`/v1/incoming-auth/context`),
 * and a dialog for a bearer token or an API key, asked for when an answer is 401. The credential
 * stays in memory, or in this tab's sessionStorage when the user ticks the box.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { currentCredential, setCredential, type CredentialKind } from '../api/client.js';
import type { AuthContext } from '../api/types.js';

export function AuthStatus({ who, onSignIn }: { who: AuthContext | null; onSignIn: () => void }) {
  const tenant = who?.authenticated ? (who.tenant_id ?? '(no tenant)') : 'anonymous';
  return (
    <div class="auth-status" data-testid="auth-status" aria-live="polite">
      <span>
        auth: <strong data-testid="auth-mode">{who?.mode ?? '…'}</strong>
      </span>
      <span>
        tenant: <strong data-testid="auth-tenant">{tenant}</strong>
        {who?.authenticated && who.subject ? ` (${who.method}, ${who.subject})` : ''}
      </span>
      <button type="button" class="secondary" data-testid="auth-open" onClick={onSignIn}>
        {currentCredential() ? 'Credential…' : 'Sign in…'}
      </button>
    </div>
  );
}

export function AuthDialog(props: {
  open: boolean;
  who: AuthContext | null;
  onClose: () => void;
  onChanged: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  /** Set while a close made here (props.open went false) has its close event to come. */
  const closing = useRef(false);
  const [kind, setKind] = useState<CredentialKind>(currentCredential()?.kind ?? 'bearer');
  const [value, setValue] = useState('');
  const [remember, setRemember] = useState(false);

  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) {
      closing.current = true;
      d.close();
    }
  }, [props.open]);

  const submit = (e: Event) => {
    e.preventDefault();
    if (!value.trim()) return;
    setCredential({ kind, value: value.trim() }, remember);
    setValue('');
    props.onChanged();
  };
  const forget = () => {
    setCredential(null, false);
    props.onChanged();
  };

  return (
    <dialog
      ref={ref}
      class="auth-dialog"
      aria-labelledby="auth-title"
      data-testid="auth-dialog"
      // Only a close the user made (Escape) is reported. The close event of one made here comes
      // a task later, when the page may already want the dialog again (a 401 right after a
      // credential was tried): reporting it would hide the dialog for good.
      onClose={() => (closing.current ? (closing.current = false) : props.onClose())}
    >
      <form onSubmit={submit}>
        <h2 id="auth-title">Credential for svc</h2>
        <p>
          This server checks inbound credentials (mode <code>{props.who?.mode ?? 'unknown'}</code>). Give a bearer token
          (JWT) or an API key; it is sent in <code>Authorization</code> or <code>X-API-Key</code> and kept in this
          page's memory only, unless you tick the box.
        </p>
        <label>
          Kind
          <select
            data-testid="auth-kind"
            value={kind}
            onChange={(e) => setKind((e.target as HTMLSelectElement).value as CredentialKind)}
          >
            <option value="bearer">Bearer token</option>
            <option value="api_key">API key</option>
          </select>
        </label>
        <label>
          {kind === 'bearer' ? 'Token' : 'API key'}
          <input
            type="password"
            autoComplete="off"
            data-testid="auth-value"
            value={value}
            onInput={(e) => setValue((e.target as HTMLInputElement).value)}
            required
          />
        </label>
        <label class="inline">
          <input
            type="checkbox"
            data-testid="auth-remember"
            checked={remember}
            onChange={(e) => setRemember((e.target as HTMLInputElement).checked)}
          />
          Keep it for this tab (sessionStorage)
        </label>
        <div class="buttons">
          <button type="submit" data-testid="auth-submit">
            Use it
          </button>
          {currentCredential() && (
            <button type="button" class="secondary" data-testid="auth-clear" onClick={forget}>
              Forget the credential
            </button>
          )}
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
