// The connector's consent page: a browser signed in to the chat (its token in this origin's
// storage, rest.js) has the token filled in; the user still chooses Allow or Deny.

import { getToken } from './rest.js';

const field = document.getElementById('api-token');
const saved = getToken();
if (field && saved && !field.value) {
  field.value = saved;
  document.getElementById('signed-in').hidden = false;
}
