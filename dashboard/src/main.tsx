import { render } from 'preact';
import { App } from './app';
import './styles.css';

// The page (src/dashboard/dashboard.routes.ts) names the demo token in development only.
const root = document.getElementById('app')!;
render(<App demoToken={root.dataset.demoToken} />, root);
