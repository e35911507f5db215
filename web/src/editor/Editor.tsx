/** Mounts an EditorController in a div. */
import { useEffect, useRef } from 'preact/hooks';
import type { EditorController } from './controller.js';

export function Editor({ controller, labelledBy }: { controller: EditorController; labelledBy: string }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!host.current) return;
    controller.mount(host.current);
    return () => controller.destroy();
  }, [controller]);
  return <div class="editor" ref={host} role="group" aria-labelledby={labelledBy} />;
}
