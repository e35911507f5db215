/**
 * A dry-run's review (verdict, flow, mutations, calls, one line per step) and the button that runs
 * the same program with its plan token, usable for the token's 10 minutes (a countdown shows
 * what is left). `force` is never offered here.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Review as ReviewData } from '../api/types.js';

/** A plan token's lifetime (docs/http.md, "plan token lifetime"). */
export const TOKEN_TTL_MS = 10 * 60 * 1000;

export function formatLeft(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export function Review(props: { review: ReviewData; token: string; at: number; text: string; run: () => void }) {
  const { review, token } = props;
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const left = props.at + TOKEN_TTL_MS - now;
  const expired = left <= 0;
  const headline = props.text.split('\n')[0] ?? '';
  return (
    <section class={`review verdict-${review.verdict}`} data-testid="review" aria-labelledby="review-title">
      <h3 id="review-title">
        Dry-run <code>{token}</code>: <span data-testid="review-verdict">{review.verdict}</span>
      </h3>
      <p>{headline}</p>
      <dl class="review-facts">
        <dt>flow</dt>
        <dd data-testid="review-flow">{review.flow === 'clean' ? 'clean' : review.flow.join(', ')}</dd>
        <dt>mutations</dt>
        <dd data-testid="review-mutations">{review.mutations}</dd>
        <dt>vendor calls at most</dt>
        <dd>{review.max_calls ?? 'unbounded'}</dd>
      </dl>
      <ol class="steps" data-testid="review-steps">
        {review.summary.split('\n').map((s, i) => (
          <li key={i} class={/ WRITE /.test(s) ? 'write' : ''}>
            <code>{s}</code>
          </li>
        ))}
      </ol>
      <p>
        <button type="button" data-testid="run-with-token" disabled={expired} onClick={props.run}>
          Run with {token}
        </button>{' '}
        <span data-testid="review-countdown" role="timer" aria-live="off">
          {expired ? 'the token expired: dry-run again' : `${formatLeft(left)} left`}
        </span>
      </p>
    </section>
  );
}
