/** The playground's entry point (bundled by scripts/build-web.mjs into dist/web). */
import { render } from 'preact';
import { App } from './components/App.js';
import './styles/base.css';
import './styles/panels.css';
import './styles/program.css';

const root = document.getElementById('app');
if (root) render(<App />, root);
