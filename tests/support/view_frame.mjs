// A view's <script>, run in Node as if in the host's iframe: the test is the host.
//
//   node view_frame.mjs VIEW.html
//
// What the script posts to window.parent is written to stdout, one JSON line each;
// each line the test writes to stdin is delivered as a "message" event from
// window.parent, as a host's postMessage would be. Two lines are for the test
// itself, not the view: {"frame": "dump"} answers {"frame": "dom", "root": ...}
// (the elements under <body> the script drew), {"frame": "click", "text": T}
// runs the onclick of the first button whose text is T.
//
// The DOM is the few calls the example view makes (getElementById, createElement,
// textContent, className, append, replaceChildren, onclick, body sizes); a call
// outside it throws, so a view that needs more fails loudly here.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import vm from "node:vm";

class Element {
  constructor(tag, id = "") {
    this.tagName = tag.toUpperCase();
    this.id = id;
    this.className = "";
    this.children = [];
    this.text = "";
    this.onclick = null;
  }
  get textContent() {
    return this.text + this.children.map((c) => c.textContent).join("");
  }
  set textContent(value) {
    this.text = String(value);
    this.children = [];
  }
  append(...nodes) {
    this.children.push(...nodes);
  }
  replaceChildren(...nodes) {
    this.text = "";
    this.children = nodes;
  }
  toJSON() {
    return {
      tag: this.tagName.toLowerCase(),
      id: this.id || undefined,
      className: this.className || undefined,
      text: this.text || undefined,
      children: this.children.length ? this.children : undefined,
    };
  }
}

const html = readFileSync(process.argv[2], "utf8");
const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
const body = new Element("body");
for (const [, tag, id] of html.matchAll(/<(\w+) id="([^"]+)"/g)) {
  body.append(new Element(tag, id));
}
body.scrollWidth = 320;
body.scrollHeight = 200;

function find(element, test) {
  if (test(element)) return element;
  for (const child of element.children) {
    const found = find(child, test);
    if (found) return found;
  }
  return null;
}

const listeners = [];
const parent = {
  postMessage(message, targetOrigin) {
    process.stdout.write(JSON.stringify({ ...message, targetOrigin }) + "\n");
  },
};
const window = {
  parent,
  addEventListener(type, listener) {
    if (type !== "message") throw new Error(`the frame has no ${type} events`);
    listeners.push(listener);
  },
};
const document = {
  body,
  getElementById: (id) => find(body, (e) => e.id === id),
  createElement: (tag) => new Element(tag),
};

const context = vm.createContext({ window, document, console });
for (const script of scripts) vm.runInContext(script, context);

for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  if (message.frame === "dump") {
    process.stdout.write(JSON.stringify({ frame: "dom", root: body }) + "\n");
  } else if (message.frame === "click") {
    const button = find(body, (e) => e.tagName === "BUTTON" && e.textContent === message.text);
    if (!button) throw new Error(`no button ${JSON.stringify(message.text)}`);
    button.onclick();
  } else {
    for (const listener of listeners) listener({ data: message, source: parent });
  }
}
