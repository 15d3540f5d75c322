/**
 * A person's browser, as far as the consent flows need one: it opens a page, fills the page's form as shown
 * (hidden fields, the selected option, the ticked boxes), changes what the person would change, submits it, and
 * follows redirects one at a time so each hop can be checked. Enough HTML for the sandbox's plain forms.
 */

export interface Hop {
  status: number;
  /** The Location of a redirect, resolved against the URL asked. */
  location: string | undefined;
  body: string;
}

export async function visit(url: string, init: RequestInit = {}): Promise<Hop> {
  const response = await fetch(url, { ...init, redirect: 'manual' });
  const location = response.headers.get('location');
  return { status: response.status, location: location ? new URL(location, url).toString() : undefined, body: await response.text() };
}

function decode(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return match ? decode(match[1]!) : undefined;
}

export interface ConsentForm {
  action: string;
  hidden: Record<string, string>;
  /** The select's name and its options (value -> label); the selected one first in `selected`. */
  select: { name: string; options: Record<string, string>; selected: string } | undefined;
  /** Ticked checkboxes: name -> values. */
  checked: Record<string, string[]>;
  /** The submit buttons: name -> values. */
  buttons: Record<string, string[]>;
}

/** The first form of a page, as a browser would submit it untouched. */
export function formOf(html: string, pageUrl: string): ConsentForm {
  const form = /<form\b[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (!form) throw new Error(`no form on the page: ${html.slice(0, 300)}`);
  const action = new URL(attribute(form[0].slice(0, form[0].indexOf('>') + 1), 'action') ?? '', pageUrl).toString();
  const hidden: Record<string, string> = {};
  const checked: Record<string, string[]> = {};
  const buttons: Record<string, string[]> = {};
  for (const input of form[1]!.match(/<input\b[^>]*>/g) ?? []) {
    const name = attribute(input, 'name');
    const value = attribute(input, 'value') ?? '';
    if (!name) continue;
    const type = attribute(input, 'type');
    if (type === 'hidden') hidden[name] = value;
    if (type === 'checkbox' && /\schecked\b/.test(input)) (checked[name] ??= []).push(value);
  }
  for (const button of form[1]!.match(/<button\b[^>]*>/g) ?? []) {
    const name = attribute(button, 'name');
    if (name) (buttons[name] ??= []).push(attribute(button, 'value') ?? '');
  }
  let select: ConsentForm['select'];
  const selectTag = /<select\b[^>]*>([\s\S]*?)<\/select>/.exec(form[1]!);
  if (selectTag) {
    const options: Record<string, string> = {};
    let selected = '';
    for (const option of selectTag[1]!.matchAll(/<option\b([^>]*)>([^<]*)<\/option>/g)) {
      const value = attribute(option[0], 'value') ?? '';
      options[value] = decode(option[2]!);
      if (/\sselected\b/.test(option[1]!) || !selected) selected = value;
    }
    select = { name: attribute(selectTag[0], 'name')!, options, selected };
  }
  return { action, hidden, select, checked, buttons };
}

/** Submits the form with the person's choices: a button, maybe another option, maybe fewer ticked boxes. */
export function submit(form: ConsentForm, choices: { button: [string, string]; select?: string; checked?: Record<string, string[]> }): Promise<Hop> {
  const body = new URLSearchParams(form.hidden);
  if (form.select) body.set(form.select.name, choices.select ?? form.select.selected);
  for (const [name, values] of Object.entries(choices.checked ?? form.checked)) for (const value of values) body.append(name, value);
  body.set(choices.button[0], choices.button[1]);
  return visit(form.action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
}
